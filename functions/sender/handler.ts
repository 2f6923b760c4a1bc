// Placeholder: replaced by the real handler (see lib/). Exists so that infra/ can bundle.
export const handler = async (): Promise<void> => {};
