import * as Slice from "../Slice.ts"
import * as KnowledgeContract from "./KnowledgeContract.ts"
import * as KnowledgeResource from "./KnowledgeResource.ts"
import * as KnowledgeSecurity from "./KnowledgeSecurity.ts"

export const slice = Slice.make({
  name: "knowledge",
  resources: [KnowledgeResource.resource],
  contract: KnowledgeContract.contract,
  admits: KnowledgeSecurity.admits
})
