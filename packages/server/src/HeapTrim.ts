import { performance } from "node:perf_hooks"
import v8 from "node:v8"
import vm from "node:vm"
import { Duration, Effect } from "effect"

/**
 * Gives memory back to the system once the process goes quiet after work (start-up, a burst
 * of requests).
 *
 * V8 grows its young generation while a process allocates fast (loading modules, running
 * migrations, serving a load) and keeps it at that size afterwards: a server idling on
 * PostgreSQL held about 50 MB more than it used, and after a load it stayed at its peak. A
 * collection that reduces the heap's footprint (V8's "last resort" one) shrinks it back.
 * It takes tens of milliseconds, so it runs only when the event loop has been nearly idle for
 * `quietSeconds` after a busy stretch, once per stretch (docs/performance.md, "Memory").
 */

// `gc` with options, from a fresh context: the flag exposes it there without touching the process's own globals.
const collect: ((options: object) => void) | undefined = (() => {
  try {
    v8.setFlagsFromString("--expose-gc")
    return vm.runInNewContext("gc") as (options: object) => void
  } catch {
    return undefined
  }
})()

/** Shrinks the heap now; `false` where this Node.js cannot. */
export const trimNow = (): boolean => {
  if (collect === undefined) return false
  collect({ type: "major", execution: "sync", flavor: "last-resort" })
  return true
}

export interface Options {
  /** How long the event loop must stay nearly idle after work before the heap is trimmed. */
  readonly quietSeconds: number
  /** Event-loop utilisation above which a second counts as work (0 to 1). */
  readonly busyAbove?: number | undefined
}

/** Runs forever: trims the heap each time a busy stretch is followed by `quietSeconds` of quiet. */
export const whenQuiet = (options: Options) =>
  Effect.suspend(() => {
    const busyAbove = options.busyAbove ?? 0.05
    let last = performance.eventLoopUtilization()
    // Start-up itself is the first busy stretch.
    let worked = true
    let quietFor = 0
    const check = Effect.sync(() => {
      const now = performance.eventLoopUtilization()
      const utilisation = performance.eventLoopUtilization(now, last).utilization
      last = now
      if (utilisation > busyAbove) {
        worked = true
        quietFor = 0
        return undefined
      }
      quietFor += 1
      if (!worked || quietFor < options.quietSeconds) return undefined
      worked = false
      const before = process.memoryUsage().rss
      const started = performance.now()
      if (!trimNow()) return undefined
      // The collection's own time is not work to trim after.
      last = performance.eventLoopUtilization()
      return {
        freedMB: Math.round((before - process.memoryUsage().rss) / 1048576),
        ms: Math.round(performance.now() - started)
      }
    }).pipe(
      Effect.tap((trimmed) =>
        trimmed === undefined
          ? Effect.void
          : Effect.logDebug(`heap trimmed after quiet: ${trimmed.freedMB} MB back in ${trimmed.ms} ms`)
      ),
      Effect.andThen(Effect.sleep(Duration.seconds(1)))
    )
    return Effect.forever(check)
  })
