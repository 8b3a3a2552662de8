/**
 * The delivery tests of the feed-mode suite (test/support/feed-mode-suite.ts) in stream mode's
 * variants: transactions looked up one by one, and a service whose stream keeps a transaction's own
 * data.type. Gap repair does not depend on either; the stream suite covers it.
 */

import { defineFeedModeSuite } from '../../support/feed-mode-suite.ts';
import { STREAM_MODES } from '../../support/feed-modes.ts';

defineFeedModeSuite(STREAM_MODES.slice(1), 600, { only: 'delivery' });
