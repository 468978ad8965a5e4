import * as Slice from "../Slice.ts"
import { Templates } from "./Templates.ts"

export const slice = Slice.make({ name: "templates", layer: Templates.layer, events: [] })
