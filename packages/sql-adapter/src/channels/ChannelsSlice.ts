import * as Slice from "../Slice.ts"
import * as Channels0004 from "./migrations/0004_channels.ts"
import * as Channels0032 from "./migrations/0032_channel_token_keys.ts"
import * as ChannelHealth0036 from "./migrations/0036_channel_health.ts"
import * as SqlChannels from "./SqlChannels.ts"

/** Connected WhatsApp numbers. */
export const slice = Slice.make({
  name: "channels",
  layer: SqlChannels.layer,
  migrations: [Channels0004.migration, Channels0032.migration, ChannelHealth0036.migration]
})
