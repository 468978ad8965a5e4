import { describe, expect, it } from "vitest"
import type { Document, Operation, Schema } from "../src/fuzz/OpenApiDocument.ts"
import { checkReply } from "../src/fuzz/ReplyCheck.ts"

/** A resource's own error (code `ticket_closed`, 409) and a 409 declared without a code enum. */
const errorSchema = (code: Schema): Schema => ({
  type: "object",
  properties: { error: { type: "string" }, code },
  required: ["error", "code"],
  additionalProperties: false
})

const document: Document = {
  paths: {},
  components: {
    schemas: {
      ConflictEncoded: errorSchema({ type: "string", enum: ["conflict"] }),
      TicketClosedEncoded: errorSchema({ type: "string", enum: ["ticket_closed"] })
    }
  }
}

const operation = (conflict: Schema): Operation => ({
  key: "POST /tickets/{id}/close",
  method: "post",
  path: "/tickets/{id}/close",
  parameters: [],
  requestBody: undefined,
  files: [],
  responses: new Map([["409", conflict]]),
  security: []
})

const declared = operation({
  anyOf: [{ $ref: "#/components/schemas/ConflictEncoded" }, { $ref: "#/components/schemas/TicketClosedEncoded" }]
})
const loose = operation(errorSchema({ type: "string" }))

const reply = (code: string) => ({
  status: 409,
  headers: { "content-type": "application/json", "x-request-id": "req_01" },
  text: JSON.stringify({ error: "Ticket tk_1 is closed already", code })
})

describe("the fuzzer's check of an error's code", () => {
  it("accepts a resource's own code where its operation declares it", () => {
    expect(checkReply(document, declared, reply("ticket_closed"))).toBeUndefined()
    expect(checkReply(document, declared, reply("conflict"))).toBeUndefined()
  })

  it("refuses a code the contract does not pair with the status and the operation does not declare", () => {
    expect(checkReply(document, loose, reply("ticket_closed"))).toEqual({
      path: "$.code",
      message:
        "expected conflict or idempotency_in_progress or customer_service_window_closed or invalid_transition or insufficient_stock for a 409, got ticket_closed"
    })
    expect(checkReply(document, declared, reply("made_up"))?.path).toBe("$.code")
  })
})
