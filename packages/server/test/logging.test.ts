import { Effect, Logger, References } from "effect"
import { describe, expect, it } from "vitest"
import * as Logging from "../src/Logging.ts"

const capture = async (program: Effect.Effect<void>) => {
  const lines: Array<string> = []
  await Effect.runPromise(
    program.pipe(Effect.provide(Logger.layer([Logger.map(Logging.formatJson, (line) => void lines.push(line))])))
  )
  return lines
}

describe("LOG_FORMAT=json", () => {
  it("writes one JSON object per line with the time, level, message, request id and span ids", async () => {
    const lines = await capture(
      Effect.logError("request failed").pipe(
        Effect.annotateLogs({ request_id: "req_01kabc" }),
        Effect.withSpan("POST /api/v1/leads"),
        Effect.provideService(References.TracerEnabled, true)
      )
    )
    expect(lines).toHaveLength(1)
    const line = JSON.parse(lines[0]!)
    expect(Object.keys(line).sort()).toEqual(["level", "message", "request_id", "span_id", "time", "trace_id"])
    expect(line).toMatchObject({ level: "ERROR", message: "request failed", request_id: "req_01kabc" })
    expect(new Date(line.time).toISOString()).toBe(line.time)
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/)
    expect(line.span_id).toMatch(/^[0-9a-f]{16}$/)
  })

  it("leaves out span ids outside a span and keeps a multi-line cause on its one line", async () => {
    const lines = await capture(Effect.logWarning("slow\nstore", new Error("boom")))
    expect(lines).toHaveLength(1)
    expect(lines[0]).not.toContain("\n")
    const line = JSON.parse(lines[0]!)
    expect(line.level).toBe("WARN")
    expect(line.trace_id).toBeUndefined()
    expect(JSON.stringify(line.message)).toContain("slow\\nstore")
  })
})
