package dev.aggforge.flink.harness;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.Map;

import org.apache.flink.table.data.RowData;
import org.junit.jupiter.api.Test;

/** {@link NexmarkBids}: event ids, timestamps, the first bids' ids and the distributions. */
class NexmarkBidsTest {

    private static final int ROWS = 30_000;

    private final NexmarkBids bids = new NexmarkBids(NexmarkBids.DEFAULT_BASE_TIME);

    @Test
    void bidsAreOffsetsFourToFortyNineOfEachFiftyEvents() {
        assertEquals(4, NexmarkBids.eventId(0));
        assertEquals(49, NexmarkBids.eventId(45));
        assertEquals(54, NexmarkBids.eventId(46));
        assertEquals(50 * 10 + 4 + 7, NexmarkBids.eventId(46 * 10 + 7));
        // Event 4 is number 3: 300 us after the base time.
        assertEquals(NexmarkBids.DEFAULT_BASE_TIME, bids.timestamp(4));
        assertEquals(NexmarkBids.DEFAULT_BASE_TIME + 1, bids.timestamp(11));
        assertEquals(NexmarkBids.DEFAULT_BASE_TIME + 2_000, bids.timestamp(20_001));
    }

    @Test
    void lastIdsFollowTheEventCycle() {
        // Ids 1..3 are auctions 0..2, id 50 is person 1, ids 51..53 auctions 3..5.
        assertEquals(0, NexmarkBids.lastAuction(1));
        assertEquals(2, NexmarkBids.lastAuction(49));
        assertEquals(2, NexmarkBids.lastAuction(50));
        assertEquals(3, NexmarkBids.lastAuction(51));
        assertEquals(0, NexmarkBids.lastPerson(49));
        assertEquals(1, NexmarkBids.lastPerson(50));
        assertEquals(1, NexmarkBids.lastPerson(99));
    }

    @Test
    void rowsArePureFunctionsOfTheIndex() {
        for (long i = 0; i < 1_000; i += 37) {
            assertEquals(bids.map(i), new NexmarkBids(NexmarkBids.DEFAULT_BASE_TIME).map(i));
        }
    }

    @Test
    void distributionsAreNexmarks() {
        int hotAuctions = 0;
        int hotBidders = 0;
        int hotChannels = 0;
        int cheap = 0;
        long lastTime = Long.MIN_VALUE;
        Map<String, Integer> channels = new HashMap<>();
        for (long i = 0; i < ROWS; i++) {
            RowData row = bids.map(i);
            long id = NexmarkBids.eventId(i);
            long auction = row.getLong(0);
            long bidder = row.getLong(1);
            long price = row.getLong(2);
            String channel = row.getString(3).toString();
            long time = row.getTimestamp(5, 3).getMillisecond();
            int extra = row.getString(6).toString().length();

            long lastAuction = NexmarkBids.lastAuction(id);
            assertTrue(auction >= 1000 && auction <= 1000 + lastAuction + 10, "auction " + auction);
            if (auction == 1000 + (lastAuction / 100) * 100) {
                hotAuctions++;
            }
            long lastPerson = NexmarkBids.lastPerson(id);
            assertTrue(bidder >= 2000 && bidder <= 2000 + lastPerson + 10, "bidder " + bidder);
            if (bidder == 2001 + (lastPerson / 100) * 100) {
                hotBidders++;
            }
            assertTrue(price >= 100 && price <= 100_000_000, "price " + price);
            if (price < 10_000) {
                cheap++;
            }
            if (!channel.startsWith("channel-")) {
                hotChannels++;
            } else {
                assertTrue(Integer.parseInt(channel.substring(8)) < 10_000, channel);
            }
            channels.merge(channel, 1, Integer::sum);
            assertTrue(extra >= 54 && extra <= 81, "extra length " + extra);
            assertTrue(time >= lastTime, "time goes back at row " + i);
            lastTime = time;
        }
        // Hot auctions 1/2 (+ random hits), hot bidders 3/4 (+), hot channels 1/2, prices
        // log-uniform over [10^2, 10^8]: a third below 10^4.
        assertNear(0.5, hotAuctions, 0.03);
        assertNear(0.75, hotBidders, 0.03);
        assertNear(0.5, hotChannels, 0.02);
        assertNear(1.0 / 3, cheap, 0.02);
        for (String hot : new String[] {"Google", "Facebook", "Baidu", "Apple"}) {
            assertNear(0.125, channels.get(hot), 0.015);
        }
        // The last of 30,000 bids is event 32,611 (number 32,610): 3,261 ms.
        assertEquals(NexmarkBids.DEFAULT_BASE_TIME + 3_261, lastTime);
    }

    private static void assertNear(double expected, int count, double tolerance) {
        double fraction = (double) count / ROWS;
        assertTrue(
                Math.abs(fraction - expected) < tolerance, fraction + " is not near " + expected);
    }
}
