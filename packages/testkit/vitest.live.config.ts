import { defineConfig } from "vitest/config"
import { sources } from "../../vitest.shared.ts"

/** The contract suite against a running deployment: see the README, "Testing your own deployment". */
export default defineConfig({
  ...sources,
  test: { include: ["test/live/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000 }
})
