import type { Figures, SimContext } from './scenarios.js'
import type { SimNet } from './net.js'
export async function churn (_ctx: SimContext, _net: SimNet): Promise<Figures> { return {} }
