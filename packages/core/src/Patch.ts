/** The fields a PATCH names: a field left out keeps its value, `null` clears one. */
export const definedFields = <A extends object>(input: A): { [K in keyof A]?: Exclude<A[K], undefined> } =>
  Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as {
    [K in keyof A]?: Exclude<A[K], undefined>
  }
