package dev.aggforge.flink.harness;

/**
 * Nexmark q15, q16 and q17 (nexmark-flink/src/main/resources/queries): Nexmark's SELECTs over a
 * table {@code bid} with the columns of {@link InputTable#nexmarkBids}. Shared by the parity
 * suite and the complete-job benchmark.
 */
public final class NexmarkQueries {

    private NexmarkQueries() {}

    /** Counts per price rank: the filtered COUNT(*) calls every one of the three queries has. */
    private static final String RANKED_BIDS =
            " count(*) AS total_bids,"
                    + " count(*) filter (where price < 10000) AS rank1_bids,"
                    + " count(*) filter (where price >= 10000 and price < 1000000) AS rank2_bids,"
                    + " count(*) filter (where price >= 1000000) AS rank3_bids,";

    /** Distinct bidders and auctions per price rank (q15, q16). */
    private static final String RANKED_DISTINCT =
            " count(distinct bidder) AS total_bidders,"
                    + " count(distinct bidder) filter (where price < 10000) AS rank1_bidders,"
                    + " count(distinct bidder) filter (where price >= 10000 and price < 1000000)"
                    + " AS rank2_bidders,"
                    + " count(distinct bidder) filter (where price >= 1000000) AS rank3_bidders,"
                    + " count(distinct auction) AS total_auctions,"
                    + " count(distinct auction) filter (where price < 10000) AS rank1_auctions,"
                    + " count(distinct auction) filter (where price >= 10000 and price < 1000000)"
                    + " AS rank2_auctions,"
                    + " count(distinct auction) filter (where price >= 1000000) AS rank3_auctions";

    /** Query 15: bidding statistics per day. */
    public static final String Q15 =
            "SELECT DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') as `day`,"
                    + RANKED_BIDS
                    + RANKED_DISTINCT
                    + " FROM bid GROUP BY DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')";

    /** Query 16: channel statistics per day (and the day's last minute). */
    public static final String Q16 =
            "SELECT channel, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') as `day`,"
                    + " max(DATE_FORMAT(`dateTime`, 'HH:mm')) as `minute`,"
                    + RANKED_BIDS
                    + RANKED_DISTINCT
                    + " FROM bid GROUP BY channel, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')";

    /** Query 17: auction statistics per day. */
    public static final String Q17 =
            "SELECT auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd') as `day`,"
                    + RANKED_BIDS
                    + " min(price) AS min_price, max(price) AS max_price,"
                    + " avg(price) AS avg_price, sum(price) AS sum_price"
                    + " FROM bid GROUP BY auction, DATE_FORMAT(`dateTime`, 'yyyy-MM-dd')";
}
