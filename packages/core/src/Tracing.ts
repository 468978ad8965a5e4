import { Effect, References } from "effect"

/**
 * Names a span around an effect, made only while tracing is on. `Effect.fn(name)`
 * and `Effect.withSpan` capture a stack trace on every call (about 7 µs each here)
 * even with `References.TracerEnabled` off, and service methods run on every
 * request; so they declare their span through this instead:
 * `Effect.fnUntraced(function* () { … }, Tracing.span("Leads.list"))`.
 */
export const span =
  (name: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.withFiber((fiber) => (fiber.getRef(References.TracerEnabled) ? Effect.withSpan(effect, name) : effect))
