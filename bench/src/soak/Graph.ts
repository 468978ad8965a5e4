import { type ChildProcess, fork } from "node:child_process"
import { join } from "node:path"
import type { Attempt, FromGraph, Rates, ToGraph } from "./GraphProtocol.ts"

/**
 * The soak's side of its Graph API process (GraphServer.ts): where it listens, the faults it
 * answers with, taking it away and back, and every send it saw, in arrival order.
 */
export interface Graph {
  /** The base URL for `WHATSAPP_API_BASE_URL`. */
  readonly url: string
  readonly attempts: ReadonlyArray<Attempt>
  /** Called with each batch of sends as they arrive (the soak plays Meta's statuses from them). */
  onAttempts: (attempts: ReadonlyArray<Attempt>) => void
  readonly setFaults: (rates: Rates, lateMillis: number) => void
  /** Away until `up`: resolves once the listener is closed; answers how many requests it cut unanswered. */
  readonly down: () => Promise<number>
  readonly up: () => Promise<void>
  /** Resolves once every send seen so far has been reported. */
  readonly flush: () => Promise<void>
  readonly close: () => void
}

/** Rates from `SOAK_GRAPH_FAULTS` (`throttled=0.03,hang=0.01,…`), over these defaults. */
export const ratesFrom = (setting: string | undefined): Rates => {
  const rates: Rates = {
    throttled: 0.03,
    unavailable: 0.02,
    pageBeforeTake: 0.01,
    pageAfterTake: 0.01,
    hang: 0.01,
    late: 0.01,
    slow: 0.1
  }
  for (const part of (setting ?? "").split(",").filter((p) => p.trim() !== "")) {
    const [name, value] = part.split("=").map((s) => s.trim())
    if (!(name! in rates) || !Number.isFinite(Number(value))) {
      throw new Error(`SOAK_GRAPH_FAULTS: "${part}" is not one of ${Object.keys(rates).join(", ")} = a share`)
    }
    rates[name as keyof Rates] = Number(value)
  }
  const total = Object.values(rates).reduce((a, b) => a + b, 0)
  if (total > 1) throw new Error(`SOAK_GRAPH_FAULTS: the shares add up to ${total}, over 1`)
  return rates
}

export const start = async (): Promise<Graph> => {
  const child: ChildProcess = fork(join(import.meta.dirname, "GraphServer.ts"), [], {
    execArgv: ["--conditions=@leadline/source"],
    stdio: ["ignore", "inherit", "inherit", "ipc"]
  })
  const attempts: Array<Attempt> = []
  const waiting = new Map<string, Array<(message: FromGraph) => void>>()
  const once = (type: FromGraph["type"]) =>
    new Promise<FromGraph>((resolve) => waiting.set(type, [...(waiting.get(type) ?? []), resolve]))
  const command = (message: ToGraph) => child.send(message)
  const graph: Graph = {
    url: "",
    attempts,
    onAttempts: () => undefined,
    setFaults: (rates, lateMillis) => command({ type: "faults", rates, lateMillis }),
    down: async () => {
      const done = once("down")
      command({ type: "down" })
      const message = await done
      return message.type === "down" ? message.cut : 0
    },
    up: async () => {
      const done = once("up")
      command({ type: "up" })
      await done
    },
    flush: async () => {
      const done = once("flushed")
      command({ type: "flush" })
      await done
    },
    close: () => child.kill("SIGKILL")
  }
  child.on("message", (message: FromGraph) => {
    if (message.type === "attempts") {
      attempts.push(...message.attempts)
      graph.onAttempts(message.attempts)
    }
    const resolvers = waiting.get(message.type)
    waiting.delete(message.type)
    for (const resolve of resolvers ?? []) resolve(message)
  })
  process.on("exit", () => child.kill("SIGKILL"))
  const ready = await Promise.race([
    once("ready"),
    new Promise<never>((_, reject) => child.once("exit", (code) => reject(new Error(`Graph exited with ${code}`))))
  ])
  if (ready.type !== "ready") throw new Error("Graph did not start")
  return Object.assign(graph, { url: `http://127.0.0.1:${ready.port}` })
}
