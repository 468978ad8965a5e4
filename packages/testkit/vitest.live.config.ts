import { defineConfig } from "vitest/config"

/** The contract suite against a running deployment: see the README, "Testing your own deployment". */
export default defineConfig({ test: { include: ["test/live/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 } })
