// The files `sless init` writes for each language of the runtime catalog (pure): a handler that
// answers with a greeting and echoes what it got, and a function.yaml for the runtime.
import type { Language } from '../../build/runtime-catalog.ts';
import type { Runtime } from '../../manifest/types.ts';

export interface TemplateOptions {
  readonly name: string;
  readonly runtime: Runtime;
  readonly language: Language;
  /** Set when the folder's name is not the function's name. */
  readonly explicitName: boolean;
}

export function functionYaml(o: TemplateOptions): string {
  const lines = [
    `# The function ${o.name}: sless builds this folder with the ${o.runtime} runtime and serves it at /fn/<namespace>/${o.name}.`,
    ...(o.explicitName ? [`name: ${o.name}`] : []),
    `runtime: ${o.runtime}`,
    // Go compiles the package's Handle; the entrypoint is only read for Python and Node.js.
    ...(o.language === 'go' ? [] : ['entrypoint: handler.handle']),
    'env:',
    '  GREETING: Hello',
  ];
  return `${lines.join('\n')}\n`;
}

const NODE_HANDLER = `// event: the JSON body ({} for none); context: method, path, query, headers, function, namespace, deadline.
exports.handle = async (event, context) => {
  const name = (event && event.name) || context.query.name || 'world';
  return { message: \`\${process.env.GREETING || 'Hello'}, \${name}!\`, event, path: context.path };
};
`;

const PYTHON_HANDLER = `import os


# event: the JSON body ({} for none); context: method, path, query, headers, function, namespace, deadline.
def handle(event, context):
    name = (event.get("name") if isinstance(event, dict) else None) or context["query"].get("name") or "world"
    return {"message": f"{os.environ.get('GREETING', 'Hello')}, {name}!", "event": event, "path": context["path"]}
`;

const GO_HANDLER = `package function

import (
	"context"
	"fmt"
	"os"
)

// Event is decoded from the request's JSON body ({} when there is none).
type Event struct {
	Name string \`json:"name"\`
}

func Handle(ctx context.Context, event Event) (map[string]any, error) {
	name := event.Name
	if name == "" {
		name = "world"
	}
	return map[string]any{"message": fmt.Sprintf("%s, %s!", os.Getenv("GREETING"), name), "event": event}, nil
}
`;

/** Relative path → content of every file of a new function. */
export function templateFiles(o: TemplateOptions): Record<string, string> {
  const files: Record<string, string> = { 'function.yaml': functionYaml(o) };
  if (o.language === 'node') files['handler.js'] = NODE_HANDLER;
  if (o.language === 'python') files['handler.py'] = PYTHON_HANDLER;
  if (o.language === 'go') {
    files['handler.go'] = GO_HANDLER;
    files['go.mod'] = `module example.com/${o.name}\n\ngo 1.23\n`;
  }
  return files;
}
