export * as GuardedLookup from "./GuardedLookup.ts"
export * as Sender from "./Sender.ts"
export * as Worker from "./Worker.ts"
