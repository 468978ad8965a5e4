/**
 * How the SQL stores turn a failed statement into a defect: `StoreUnavailable`
 * (503) when the database is unreachable, the failure itself (500) otherwise.
 * Public so tests can check the classification; the helpers stay internal.
 */
export { orDie } from "./internal/store.ts"
