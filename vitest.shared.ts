import type { ViteUserConfig } from "vitest/config"

/**
 * Settings every package's vitest config starts from. The JSON report lets
 * `.ci/run` total the tests of all packages in one line.
 */
export const shared = {
  reporters: ["default", ["json", { outputFile: ".vitest-report.json" }]],
  testTimeout: 30_000,
  hookTimeout: 60_000
} satisfies ViteUserConfig["test"]
