// amesh's own measurements (T1..T8). Add each as bench/amesh/<name>.ts
// exporting a Measurement, then list it here. See README.md.
import type { Measurement } from '../lib/types.js'

export const ameshMeasurements: Measurement[] = []
