import type { Measurement } from '../lib/types.js'
import { bRtt, bStream } from './libp2p.js'
import { bBatch, bFsync, bIter } from './level.js'

export const baselines: Measurement[] = [bRtt, bStream, bFsync, bBatch, bIter]
