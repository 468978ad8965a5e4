import * as Slice from "../Slice.ts"
import { Conversations } from "./Conversations.ts"

export const slice = Slice.make({ name: "conversations", layer: Conversations.layer, events: [] })
