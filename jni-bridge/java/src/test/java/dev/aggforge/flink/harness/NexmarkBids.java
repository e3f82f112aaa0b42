package dev.aggforge.flink.harness;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.binary.BinaryStringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarCharType;

/**
 * The bids of the Nexmark benchmark generator (github.com/nexmark/nexmark, nexmark-flink's
 * {@code generator} package) under its default configuration, as rows of its {@code bid} view:
 * auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, dateTime
 * TIMESTAMP(3), extra VARCHAR.
 *
 * <p>Row {@code i} is the {@code i}-th bid event of one generator's timeline. Every value is a
 * pure function of that event's id, so every run and every parallelism sees the same rows.
 *
 * <p>What follows Nexmark exactly (default configuration: person/auction/bid proportions 1/3/46,
 * first event rate 10,000 events/s, one event generator, hot auction ratio 2, hot bidder ratio 4,
 * 100 auctions in flight, 1,000 active people, average bid size 100 bytes):
 *
 * <ul>
 *   <li>event ids and types: the source starts at first event id 1 and first event number 1, so
 *       the {@code k}-th event (k = 0, 1, ...) has number {@code k + 1} and id {@code k + 2}; an
 *       id whose remainder modulo 50 is 0 is a person, 1..3 an auction, 4..49 a bid;
 *   <li>timestamps: {@code baseTime + (long) (eventNumber * 100.0) / 1000} ms (100 us between
 *       events);
 *   <li>auction, bidder, price and channel: the same draws, in the same order, from the same
 *       {@link SplittableRandom} methods, with the same bounds and the same id arithmetic
 *       (including Nexmark's bidder offset, which its BidGenerator adds twice: bidders start at
 *       2000, not 1000);
 *   <li>the length of {@code extra} (54..81 characters).
 * </ul>
 *
 * <p>Deviations:
 *
 * <ul>
 *   <li>Nexmark draws from one unseeded random generator per source split, so its values differ
 *       from run to run. Here each event draws from {@code new SplittableRandom(eventId)}
 *       (GeneratorConfig documents event ids as "used as a seed to generate each event's data").
 *       The distributions are Nexmark's; the particular values are not reproducible there anyway.
 *   <li>Nexmark's base time is the wall clock at planning; here it is a parameter ({@link
 *       #DEFAULT_BASE_TIME} by default).
 *   <li>Nexmark splits the events over one generator per source subtask, each with its own
 *       timeline (and the inter-event delay scaled by the parallelism). Here there is one
 *       timeline, whatever the parallelism.
 *   <li>{@code url} and the characters of {@code extra} are simplified (q15-q17 do not read
 *       them): Nexmark's urls carry three random path segments drawn once per JVM, and 9 of 10
 *       non-hot channels (by another unseeded draw) a {@code channel_id} parameter; here the
 *       segments name the channel and every channel whose number is not a multiple of 10 has the
 *       parameter. Nexmark's {@code extra} is a slice of one random string drawn per JVM; here the
 *       string is fixed (4,096 letters of a seeded generator) and the event's random generator
 *       draws the slice's offset. Strings are built once per channel, in binary form.
 * </ul>
 */
public final class NexmarkBids implements GeneratorFunction<Long, RowData> {
    private static final long serialVersionUID = 1L;

    /**
     * Two seconds before midnight (UTC; TIMESTAMP(3) without zone): at 10,000 events per second a
     * run of more than about 18,400 bids spans two days and two minutes.
     */
    public static final long DEFAULT_BASE_TIME =
            Instant.parse("2024-01-01T23:59:58Z").toEpochMilli();

    /** The columns of Nexmark's {@code bid} view, all nullable as in its DDL. */
    public static final RowType ROW_TYPE =
            new RowType(
                    false,
                    List.of(
                            new RowType.RowField("auction", new BigIntType()),
                            new RowType.RowField("bidder", new BigIntType()),
                            new RowType.RowField("price", new BigIntType()),
                            new RowType.RowField("channel", string()),
                            new RowType.RowField("url", string()),
                            new RowType.RowField("dateTime", new TimestampType(3)),
                            new RowType.RowField("extra", string())));

    // Nexmark's default configuration (NexmarkConfiguration, GeneratorConfig).
    private static final int PERSON_PROPORTION = 1;
    private static final int AUCTION_PROPORTION = 3;
    private static final int TOTAL_PROPORTION = 50; // + 46 bids
    private static final long FIRST_EVENT_ID = 1;
    private static final long FIRST_PERSON_ID = 1000;
    private static final long FIRST_AUCTION_ID = 1000;
    private static final double INTER_EVENT_DELAY_US = 1_000_000.0 / 10_000; // rate 10,000/s
    private static final int HOT_AUCTION_RATIO = 2; // config: P(hot auction) = 1/2
    private static final int HOT_BIDDERS_RATIO = 4; // config: P(hot bidder) = 3/4
    private static final int IN_FLIGHT_AUCTIONS = 100;
    private static final int ACTIVE_PEOPLE = 1000;
    private static final int AVG_BID_BYTES = 100;

    // BidGenerator's own constants (the batch size of hot auctions and bidders).
    private static final int HOT_AUCTION_BATCH = 100;
    private static final int HOT_BIDDER_BATCH = 100;
    private static final int HOT_CHANNELS_RATIO = 2;
    private static final int CHANNELS = 10_000;
    private static final String[] HOT_CHANNELS = {"Google", "Facebook", "Baidu", "Apple"};
    /** Ids drawn beyond the last generated auction or person ("leads"). */
    private static final int ID_LEAD = 10;

    private final long baseTime;

    /** Bids on a timeline starting at {@code baseTime} (ms since epoch). */
    public NexmarkBids(long baseTime) {
        this.baseTime = baseTime;
    }

    private static VarCharType string() {
        return new VarCharType(VarCharType.MAX_LENGTH);
    }

    /** The event id of the {@code index}-th bid (46 bids at offsets 4..49 of each 50 ids). */
    public static long eventId(long index) {
        int bidsPerCycle = TOTAL_PROPORTION - PERSON_PROPORTION - AUCTION_PROPORTION;
        return (index / bidsPerCycle) * TOTAL_PROPORTION
                + PERSON_PROPORTION
                + AUCTION_PROPORTION
                + index % bidsPerCycle;
    }

    /** The event time (ms since epoch) of event {@code eventId}, as GeneratorConfig computes it. */
    public long timestamp(long eventId) {
        long eventNumber = eventId - FIRST_EVENT_ID;
        return baseTime + (long) (eventNumber * INTER_EVENT_DELAY_US) / 1000L;
    }

    @Override
    public RowData map(Long index) {
        long id = eventId(index);
        SplittableRandom random = new SplittableRandom(id);

        long auction;
        if (random.nextInt(HOT_AUCTION_RATIO) > 0) {
            auction = (lastAuction(id) / HOT_AUCTION_BATCH) * HOT_AUCTION_BATCH;
        } else {
            long max = lastAuction(id);
            long min = Math.max(max - IN_FLIGHT_AUCTIONS, 0);
            auction = min + nextLong(random, max - min + 1 + ID_LEAD);
        }
        auction += FIRST_AUCTION_ID;

        long bidder;
        if (random.nextInt(HOT_BIDDERS_RATIO) > 0) {
            // The second person of the batch, so that hot bidders are not hot sellers.
            bidder = (lastPerson(id) / HOT_BIDDER_BATCH) * HOT_BIDDER_BATCH + 1;
        } else {
            long people = lastPerson(id) + 1;
            long active = Math.min(people, ACTIVE_PEOPLE);
            bidder = people - active + nextLong(random, active + ID_LEAD);
        }
        bidder += 2 * FIRST_PERSON_ID; // Nexmark adds the offset twice

        long price = Math.round(Math.pow(10.0, random.nextDouble() * 6.0) * 100.0);

        StringData channel;
        StringData url;
        if (random.nextInt(HOT_CHANNELS_RATIO) > 0) {
            int hot = random.nextInt(HOT_CHANNELS.length);
            channel = HOT_CHANNEL_DATA[hot];
            url = HOT_URL_DATA[hot];
        } else {
            int n = random.nextInt(CHANNELS);
            channel = CHANNEL_DATA[n];
            url = URL_DATA[n];
        }

        StringData extra = extra(random, 8 + 8 + 8 + 8);

        GenericRowData row = new GenericRowData(ROW_TYPE.getFieldCount());
        row.setField(0, auction);
        row.setField(1, bidder);
        row.setField(2, price);
        row.setField(3, channel);
        row.setField(4, url);
        row.setField(5, TimestampData.fromEpochMillis(timestamp(id)));
        row.setField(6, extra);
        return row;
    }

    /** The last auction id (base 0) generated at or before event {@code eventId}. */
    static long lastAuction(long eventId) {
        long epoch = eventId / TOTAL_PROPORTION;
        long offset = eventId % TOTAL_PROPORTION;
        if (offset < PERSON_PROPORTION) {
            // A person: the last auction of the previous epoch.
            epoch--;
            offset = AUCTION_PROPORTION - 1;
        } else if (offset >= PERSON_PROPORTION + AUCTION_PROPORTION) {
            // A bid: the last auction of this epoch.
            offset = AUCTION_PROPORTION - 1;
        } else {
            offset -= PERSON_PROPORTION;
        }
        return epoch * AUCTION_PROPORTION + offset;
    }

    /** The last person id (base 0) generated at or before event {@code eventId}. */
    static long lastPerson(long eventId) {
        long epoch = eventId / TOTAL_PROPORTION;
        long offset = Math.min(eventId % TOTAL_PROPORTION, PERSON_PROPORTION - 1);
        return epoch * PERSON_PROPORTION + offset;
    }

    /** A value in {@code [0, n)}, as Nexmark's LongGenerator draws it. */
    private static long nextLong(SplittableRandom random, long n) {
        return n < Integer.MAX_VALUE ? random.nextInt((int) n) : Math.abs(random.nextLong() % n);
    }

    /**
     * Padding so that a bid's size averages {@link #AVG_BID_BYTES}: Nexmark's length (the rest
     * of the average, minus up to 20 %, plus a draw of up to 40 %), a slice of one random string
     * at a drawn offset (as Nexmark slices one random string).
     */
    private static StringData extra(SplittableRandom random, int currentSize) {
        if (currentSize > AVG_BID_BYTES) {
            return EMPTY;
        }
        int rest = AVG_BID_BYTES - currentSize;
        int delta = (int) Math.round(rest * 0.2);
        int length = rest - delta + (delta == 0 ? 0 : random.nextInt(2 * delta));
        int offset = random.nextInt(LETTERS.length - length + 1);
        return BinaryStringData.fromBytes(LETTERS, offset, length);
    }

    // Strings built once (binary form, so rows of every subtask can share them): the channels
    // and urls, and the letters extra slices.
    private static final StringData EMPTY = BinaryStringData.fromBytes(new byte[0]);
    private static final StringData[] HOT_CHANNEL_DATA = new StringData[HOT_CHANNELS.length];
    private static final StringData[] HOT_URL_DATA = new StringData[HOT_CHANNELS.length];
    private static final StringData[] CHANNEL_DATA = new StringData[CHANNELS];
    private static final StringData[] URL_DATA = new StringData[CHANNELS];
    private static final byte[] LETTERS = new byte[4096];

    static {
        for (int i = 0; i < HOT_CHANNELS.length; i++) {
            String channel = HOT_CHANNELS[i];
            HOT_CHANNEL_DATA[i] = utf8(channel);
            HOT_URL_DATA[i] =
                    utf8("https://www.nexmark.com/hot/" + channel.toLowerCase() + "/item.htm?query=1");
        }
        for (int n = 0; n < CHANNELS; n++) {
            CHANNEL_DATA[n] = utf8("channel-" + n);
            String url = "https://www.nexmark.com/channel/" + n + "/item.htm?query=1";
            if (n % 10 != 0) {
                url += "&channel_id=" + Math.abs(Integer.reverse(n));
            }
            URL_DATA[n] = utf8(url);
        }
        SplittableRandom letters = new SplittableRandom(0x6e65786d61726bL);
        for (int i = 0; i < LETTERS.length; i++) {
            LETTERS[i] = (byte) ('a' + letters.nextInt(26));
        }
    }

    private static StringData utf8(String text) {
        return BinaryStringData.fromBytes(text.getBytes(StandardCharsets.UTF_8));
    }
}
