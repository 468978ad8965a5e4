import * as Slice from "../Slice.ts"
import * as SqlMessages from "./SqlMessages.ts"

/** Messages in and out; their table comes with conversations' migration 0005. */
export const slice = Slice.make({ name: "messages", layer: SqlMessages.layer, migrations: [] })
