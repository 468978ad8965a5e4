import * as Slice from "../Slice.ts"
import { Channels } from "./Channels.ts"

export const slice = Slice.make({ name: "channels", layer: Channels.layer, events: [] })
