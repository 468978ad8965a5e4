import * as Slice from "../Slice.ts"
import * as EventsContract from "./EventsContract.ts"
import * as EventsResource from "./EventsResource.ts"
import * as EventsSecurity from "./EventsSecurity.ts"

export const slice = Slice.make({
  name: "events",
  resources: [EventsResource.resource],
  contract: EventsContract.contract,
  admits: EventsSecurity.admits
})
