import * as Slice from "../Slice.ts"
import { Simulator } from "./Simulator.ts"

/** The AI simulation; it emits nothing. */
export const slice = Slice.make({ name: "ai", layer: Simulator.layer, events: [] })
