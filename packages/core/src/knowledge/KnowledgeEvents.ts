import { Schema } from "effect"
import * as Event from "../events/Event.ts"
import { KnowledgeSource } from "./Source.ts"

/**
 * `knowledge.updated` ("content is uploaded or deleted"): the source without its content (which
 * may be 200 000 characters: a receiver reads it with `GET /sources/{id}`), `deleted: true` when
 * it was deleted, and `previous_attributes` on a change.
 */
export const updated = Event.define(
  "knowledge.updated",
  Schema.Struct({ ...KnowledgeSource.fields, deleted: Schema.optional(Schema.Literal(true)) }).annotate({
    identifier: "EventKnowledgeSource"
  }),
  "knowledge.view"
)
