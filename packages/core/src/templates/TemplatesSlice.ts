import * as Slice from "../Slice.ts"
import * as TemplateEvents from "./TemplateEvents.ts"
import { Templates } from "./Templates.ts"

export const slice = Slice.make({ name: "templates", layer: Templates.layer, events: [TemplateEvents.updated] })
