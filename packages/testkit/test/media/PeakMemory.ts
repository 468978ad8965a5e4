import v8 from "node:v8"
import vm from "node:vm"

// Live memory, not garbage: collected before each sample.
v8.setFlagsFromString("--expose-gc")
const gc = vm.runInNewContext("gc") as () => void

const used = () => {
  gc()
  const memory = process.memoryUsage()
  return memory.heapUsed + memory.arrayBuffers
}

/** The most the live heap and the buffers outside it grew, sampled every 100 ms while `run` ran. */
export const peakGrowth = async (run: () => Promise<unknown>): Promise<number> => {
  const before = used()
  let peak = before
  const timer = setInterval(() => {
    peak = Math.max(peak, used())
  }, 100)
  try {
    await run()
  } finally {
    clearInterval(timer)
  }
  return Math.max(peak, used()) - before
}
