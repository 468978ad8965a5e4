import { defineConfig } from "vitest/config"

// The suites talk to a real server over HTTP: allow them time, and run the files one at a time.
export default defineConfig({
  test: { include: ["test/**/*.test.ts"], testTimeout: 60_000, hookTimeout: 60_000, fileParallelism: false }
})
