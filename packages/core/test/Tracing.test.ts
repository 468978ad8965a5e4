import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, References } from "effect"
import * as Tracing from "../src/Tracing.ts"

const spanName = Effect.fnUntraced(function* (suffix: string) {
  const span = yield* Effect.option(Effect.currentSpan)
  return Option.map(span, (s) => `${s.name}${suffix}`)
}, Tracing.span("Test.spanName"))

describe("Tracing.span", () => {
  it.effect("names a span around the effect while tracing is on", () =>
    Effect.gen(function* () {
      const name = yield* spanName("!").pipe(Effect.provideService(References.TracerEnabled, true))
      assert.deepStrictEqual(name, Option.some("Test.spanName!"))
    })
  )

  it.effect("makes no span while tracing is off", () =>
    Effect.gen(function* () {
      const name = yield* spanName("!").pipe(Effect.provideService(References.TracerEnabled, false))
      assert.deepStrictEqual(name, Option.none())
    })
  )
})
