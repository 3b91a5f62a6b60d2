import { InProcessClient } from './in-process.js';
import { describeTransport } from './transport.conformance.js';

describeTransport('in-process', async (handler, options) => new InProcessClient(handler, options));
