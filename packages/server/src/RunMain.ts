import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, type Effect, Exit, Runtime } from "effect"

/** `NodeRuntime.runMain`, where a shutdown asked for by a signal is a clean exit (0), not a failure. */
export const runMain = <E, A>(effect: Effect.Effect<A, E>) =>
  NodeRuntime.runMain(effect, {
    teardown: (exit, onExit) =>
      Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? onExit(0) : Runtime.defaultTeardown(exit, onExit)
  })
