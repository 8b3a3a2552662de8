/** The feed-mode suite (test/support/feed-mode-suite.ts) in stream mode, as deployed by default. */

import { defineFeedModeSuite } from '../../support/feed-mode-suite.ts';
import { STREAM_MODES } from '../../support/feed-modes.ts';

defineFeedModeSuite(STREAM_MODES.slice(0, 1), 500);
