// A Redocly plugin for the docs page (redocly.yaml): each operation's
// description opens with its operationId, the name the TypeScript client's
// functions and the README use (`claimAccountDeposit`), so the page can be
// searched by it. Decorators run when build-docs bundles the spec; the
// spec itself and its lint are untouched.
module.exports = function operationIDs() {
  return {
    id: "creativeapi",
    decorators: {
      oas3: {
        "operation-id-in-description": () => ({
          Operation: {
            leave(operation) {
              if (!operation.operationId) return;
              const line = `Operation \`${operation.operationId}\` (the TypeScript client's function of that name).`;
              operation.description = operation.description ? `${line}\n\n${operation.description}` : line;
            },
          },
        }),
      },
    },
  };
};
