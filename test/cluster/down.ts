// `npm run cluster:down`: stops the cluster `npm run cluster:up` started (and nothing else): its
// control plane, or its real node with everything that node changed on the host.
import { stopFromState, stopOwnNode } from './state.ts';

const stopped = await stopFromState();
const node = await stopOwnNode();
if (stopped) console.log(`test cluster stopped (${stopped.join(' ')})`);
if (node) console.log(`test node stopped${node.length ? `; not undone: ${node.join('; ')}` : ' and its host changes undone'}`);
if (!stopped && !node) console.log('no test cluster was running');
