// `npm run cluster:down`: stops the cluster `npm run cluster:up` started (and nothing else).
import { stopFromState } from './state.ts';

const stopped = await stopFromState();
console.log(stopped ? `test cluster stopped (${stopped.join(' ')})` : 'no test cluster was running');
