import { OutcomeUnknown, Rejected, type SendFailure } from "@leadline/core/messages/MessageTransport"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import * as GraphErrors from "../src/cloud/GraphErrors.ts"

const graphError = (code: number, message = `(#${code}) Something`) =>
  JSON.stringify({
    error: {
      message,
      type: "OAuthException",
      code,
      error_subcode: 2494010,
      error_data: { messaging_product: "whatsapp", details: "details" },
      fbtrace_id: "Az8or2yhqkZfEZ-_4Qn_Bam"
    }
  })

const failure = (result: Result.Result<unknown, SendFailure>): SendFailure => {
  if (Result.isSuccess(result)) throw new Error("expected a failure")
  return result.failure
}

const rejected = (fields: {
  readonly retryable: boolean
  readonly providerCode: number | null
  readonly message: string
  readonly channelError: boolean
}) => new Rejected({ retryAfterMs: null, ...fields })

/** A Node system error as net and dns raise them. */
const systemError = (code: string, message: string) => Object.assign(new Error(message), { code })

describe("classifyResponse", () => {
  it("accepts a 200 with messages[0].id, taking wa_id from contacts[0]", () => {
    const body = JSON.stringify({
      messaging_product: "whatsapp",
      contacts: [{ input: "+1 631-555-1181", wa_id: "16315551181" }],
      messages: [{ id: "wamid.HBgLMTYzMTU1NTExODEVAgARGBI1" }]
    })
    expect(GraphErrors.classifyResponse(200, body)).toEqual(
      Result.succeed({ externalId: "wamid.HBgLMTYzMTU1NTExODEVAgARGBI1", waId: "16315551181" })
    )
  })

  it("accepts without contacts, with a null waId", () => {
    expect(GraphErrors.classifyResponse(200, JSON.stringify({ messages: [{ id: "wamid.X" }] }))).toEqual(
      Result.succeed({ externalId: "wamid.X", waId: null })
    )
  })

  it("calls a 200 without a usable messages[0].id an unknown outcome", () => {
    for (const body of [{}, { messages: [] }, { messages: [{ id: "" }] }, { messages: [{ id: 7 }] }, [1], "ok", null]) {
      expect(failure(GraphErrors.classifyResponse(200, JSON.stringify(body))), JSON.stringify(body)).toEqual(
        new OutcomeUnknown({ reason: "HTTP 200 without messages[0].id" })
      )
    }
  })

  it("rejects the retryable codes as retryable, whatever the status", () => {
    for (const code of [130429, 131056, 131057, 131000, 80007, 4, 2]) {
      for (const status of [400, 500]) {
        expect(failure(GraphErrors.classifyResponse(status, graphError(code))), `${code}`).toEqual(
          rejected({ retryable: true, providerCode: code, message: `(#${code}) Something`, channelError: false })
        )
      }
    }
  })

  it("rejects token and permission codes as channel errors, not retryable, even on 429/503", () => {
    for (const code of [0, 10, 190, 200, 250, 299]) {
      for (const status of [400, 401, 403, 429, 503]) {
        expect(failure(GraphErrors.classifyResponse(status, graphError(code))), `${code}/${status}`).toEqual(
          rejected({ retryable: false, providerCode: code, message: `(#${code}) Something`, channelError: true })
        )
      }
    }
  })

  it("rejects any other code with its code and message, retryable only on 429/503", () => {
    for (const code of [100, 131026, 131047, 131048, 131049, 132000, 132001, 132015, 368, 300, 199]) {
      expect(failure(GraphErrors.classifyResponse(400, graphError(code, "Message undeliverable")))).toEqual(
        rejected({ retryable: false, providerCode: code, message: "Message undeliverable", channelError: false })
      )
      for (const status of [429, 503]) {
        expect(failure(GraphErrors.classifyResponse(status, graphError(code, "Busy")))).toEqual(
          rejected({ retryable: true, providerCode: code, message: "Busy", channelError: false })
        )
      }
    }
  })

  it("names the code when Meta's message is missing", () => {
    expect(failure(GraphErrors.classifyResponse(400, JSON.stringify({ error: { code: 131026 } })))).toEqual(
      rejected({ retryable: false, providerCode: 131026, message: "Graph error 131026", channelError: false })
    )
  })

  it("calls anything else an unknown outcome: no Graph error, not JSON, a code that is not an integer", () => {
    expect(failure(GraphErrors.classifyResponse(500, "<html>oops</html>"))).toEqual(
      new OutcomeUnknown({ reason: "HTTP 500 with a body that is not JSON" })
    )
    expect(failure(GraphErrors.classifyResponse(502, ""))).toEqual(
      new OutcomeUnknown({ reason: "HTTP 502 with a body that is not JSON" })
    )
    expect(failure(GraphErrors.classifyResponse(503, JSON.stringify({ error: { code: "2" } })))).toEqual(
      new OutcomeUnknown({ reason: "HTTP 503 without a Graph error body" })
    )
    expect(failure(GraphErrors.classifyResponse(504, JSON.stringify({})))).toEqual(
      new OutcomeUnknown({ reason: "HTTP 504 without a Graph error body" })
    )
  })

  it("rejects a 4xx without a Graph error body (a proxy refused it): retryable on 429 and 408 only", () => {
    const refused = (status: number, retryable: boolean) =>
      rejected({
        retryable,
        providerCode: null,
        message: `HTTP ${status} without a Graph error body`,
        channelError: false
      })
    expect(failure(GraphErrors.classifyResponse(429, JSON.stringify({ error: "slow down" })))).toEqual(
      refused(429, true)
    )
    expect(failure(GraphErrors.classifyResponse(408, "<html>Request Timeout</html>"))).toEqual(refused(408, true))
    expect(failure(GraphErrors.classifyResponse(400, ""))).toEqual(refused(400, false))
    expect(failure(GraphErrors.classifyResponse(403, "<html>Forbidden</html>"))).toEqual(refused(403, false))
    expect(failure(GraphErrors.classifyResponse(413, JSON.stringify({ message: "too large" })))).toEqual(
      refused(413, false)
    )
  })
})

describe("classifyTransportError", () => {
  it("rejects, retryable, when connecting failed before anything was written", () => {
    const cases = [
      systemError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:443"),
      systemError("ENOTFOUND", "getaddrinfo ENOTFOUND graph.facebook.com"),
      systemError("EAI_AGAIN", "getaddrinfo EAI_AGAIN graph.facebook.com"),
      systemError("UND_ERR_CONNECT_TIMEOUT", "Connect Timeout Error"),
      // Happy eyeballs: one error per address tried, all refused.
      Object.assign(
        new AggregateError([
          systemError("ECONNREFUSED", "connect ECONNREFUSED ::1:443"),
          systemError("ECONNREFUSED", "x")
        ]),
        { code: "ECONNREFUSED" }
      ),
      // fetch wraps the system error.
      new TypeError("fetch failed", { cause: systemError("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:443") })
    ]
    for (const cause of cases) {
      const result = GraphErrors.classifyTransportError(cause)
      expect(result, String(cause)).toBeInstanceOf(Rejected)
      expect({ ...(result as Rejected) }).toMatchObject({
        retryable: true,
        retryAfterMs: null,
        providerCode: null,
        channelError: false
      })
    }
    expect((GraphErrors.classifyTransportError(cases[0]) as Rejected).message).toBe(
      "could not connect to the Graph API: connect ECONNREFUSED 127.0.0.1:443"
    )
  })

  it("rejects, not retryable, a request the HTTP client refused to send", () => {
    expect(
      GraphErrors.classifyTransportError(systemError("UND_ERR_INVALID_ARG", "invalid authorization header"))
    ).toEqual(
      new Rejected({
        retryable: false,
        retryAfterMs: null,
        providerCode: null,
        message: "the request could not be sent: UND_ERR_INVALID_ARG: invalid authorization header",
        channelError: false
      })
    )
  })

  it("calls resets, closed sockets and unknown errors an unknown outcome", () => {
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [systemError("ECONNRESET", "read ECONNRESET"), "read ECONNRESET"],
      [systemError("UND_ERR_SOCKET", "other side closed"), "UND_ERR_SOCKET: other side closed"],
      [systemError("EPIPE", "write EPIPE"), "write EPIPE"],
      [new Error("something odd"), "something odd"],
      ["a string", "transport failure"],
      // A refused address next to a reset is no proof that nothing was written.
      [
        new AggregateError(
          [systemError("ECONNREFUSED", "refused"), systemError("ECONNRESET", "read ECONNRESET")],
          "all"
        ),
        "read ECONNRESET"
      ]
    ]
    for (const [cause, description] of cases) {
      expect(GraphErrors.classifyTransportError(cause)).toEqual(
        new OutcomeUnknown({ reason: `the connection failed, and the request may have been sent: ${description}` })
      )
    }
  })

  it("names a timeout as an unknown outcome", () => {
    expect(GraphErrors.timedOut(15_000)).toEqual(new OutcomeUnknown({ reason: "no complete answer within 15000 ms" }))
  })
})
