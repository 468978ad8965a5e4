import * as Slice from "../Slice.ts"
import { Catalogue } from "./Catalogue.ts"

/** Products; no events (the seed's event types have none for the catalogue). */
export const slice = Slice.make({
  name: "catalogue",
  layer: Catalogue.layer,
  events: []
})
