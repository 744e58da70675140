// amesh's own measurements (T1..T8). Add each as bench/amesh/<name>.ts
// exporting a Measurement, then list it here. See README.md.
import type { Measurement } from '../lib/types.js'
import { t1 } from './t1-latency.js'
import { t2, t3 } from './t2-throughput.js'
import { t4 } from './t4-replay.js'
import { t5 } from './t5-fanin.js'
import { t6 } from './t6-memory.js'
import { t7 } from './t7-scale.js'
import { t8 } from './t8-growth.js'
import { t9 } from './t9-relayed.js'
import { a2a } from './a2a.js'

export const ameshMeasurements: Measurement[] = [t1, t2, t3, t4, t5, t6, t7, t8, t9, a2a]
