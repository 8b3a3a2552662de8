/** The feed-mode suite (test/support/feed-mode-suite.ts) in poll mode. */

import { defineFeedModeSuite } from '../../support/feed-mode-suite.ts';
import { POLL_MODES } from '../../support/feed-modes.ts';

defineFeedModeSuite(POLL_MODES, 400);
