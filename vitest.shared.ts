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

/**
 * Tests import the workspace's packages from their sources: each package's `exports` gives them
 * under the `@leadline/source` condition (a pack without src/ gives `dist/`), so no test needs a
 * build. The other conditions are Vite's defaults for Node (`defaultServerConditions`).
 */
export const sources = {
  ssr: { resolve: { conditions: ["@leadline/source", "module", "node", "development|production"] } }
} satisfies ViteUserConfig

/** A package's config: the shared settings, its sources, and its own test options. */
export const config = (test: ViteUserConfig["test"] = {}): ViteUserConfig => ({
  ...sources,
  test: { ...shared, include: ["test/**/*.test.ts"], ...test }
})
