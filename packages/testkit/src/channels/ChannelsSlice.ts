import * as Slice from "../Slice.ts"
import * as ChannelsContract from "./ChannelsContract.ts"
import * as ChannelsResource from "./ChannelsResource.ts"
import * as ChannelsSecurity from "./ChannelsSecurity.ts"

export const slice = Slice.make({
  name: "channels",
  resources: [ChannelsResource.resource],
  contract: ChannelsContract.contract,
  admits: ChannelsSecurity.admits
})
