import { Schema } from "effect"
import { DomainError } from "../Errors.ts"

/** The message has a file, but its bytes are not kept (yet, or ever): docs/contract-messaging.md §5.8. */
export class MediaNotStored extends DomainError<MediaNotStored>()(
  "MediaNotStored",
  { id: Schema.String, state: Schema.Literals(["pending", "failed"]), reason: Schema.NullOr(Schema.String) },
  {
    status: 409,
    code: "media_not_stored",
    description: "The message's file is still being fetched from WhatsApp (pending), or could not be kept (failed).",
    message: ({ id, state, reason }) =>
      state === "pending"
        ? `The file of message ${id} is still being fetched; try again shortly`
        : `The file of message ${id} could not be kept (${reason ?? "failed"})`,
    details: {
      of: ({ state, reason }) => [{ path: "media.state", message: reason === null ? state : `${state}: ${reason}` }],
      description: "The media's state, and the reason when it failed"
    }
  }
) {}
