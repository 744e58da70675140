export async function drawGrowth (_runs: unknown[]): Promise<string[]> { return [] }
