import * as Slice from "../Slice.ts"
import * as MessageTemplates0035 from "./migrations/0035_message_templates.ts"
import * as SqlTemplates from "./SqlTemplates.ts"

export const slice = Slice.make({
  name: "templates",
  layer: SqlTemplates.layer,
  migrations: [MessageTemplates0035.migration]
})
