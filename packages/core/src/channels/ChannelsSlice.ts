import * as Slice from "../Slice.ts"
import * as ChannelEvents from "./ChannelEvents.ts"
import { Channels } from "./Channels.ts"

export const slice = Slice.make({ name: "channels", layer: Channels.layer, events: [ChannelEvents.healthChanged] })
