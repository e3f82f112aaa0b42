package org.apache.flink.table.planner.loader;

import java.net.URL;
import java.util.HashSet;
import java.util.Set;

import org.apache.flink.annotation.Internal;
import org.apache.flink.table.api.SqlDialect;
import org.apache.flink.table.delegation.ParserFactory;
import org.apache.flink.table.delegation.Planner;
import org.apache.flink.table.delegation.PlannerFactory;
import org.apache.flink.table.factories.FactoryUtil;

import dev.aggforge.flink.bootstrap.PlannerBootstrap;

/**
 * aggforge's stand-in for the class of the same name in {@code flink-table-planner-loader}: the
 * one seam through which a jar in {@code lib/} reaches every planner Flink creates. Flink's
 * planner loader registers this class name as the {@code "default"} PlannerFactory; the class
 * path lists {@code lib/} in name order, so {@code aggforge-*.jar} comes first and this class is
 * the one loaded. It does exactly what Flink's does (the planner from the planner module, the jar
 * of a non-default SQL dialect's parser added to the planner's class loader), then hands the new
 * planner's TableConfig to {@link PlannerBootstrap}, which installs aggforge's optimizer step.
 */
@Internal
public class DelegatePlannerFactory extends BaseDelegateFactory<PlannerFactory>
        implements PlannerFactory {

    private final Set<SqlDialect> seenDialects = new HashSet<>();

    /** Discovered by Flink's factory discovery, as Flink's own class is. */
    public DelegatePlannerFactory() {
        super(PlannerModule.getInstance().loadPlannerFactory());
        seenDialects.add(SqlDialect.DEFAULT);
    }

    @Override
    public Planner create(Context context) {
        SqlDialect dialect = context.getTableConfig().getSqlDialect();
        if (!seenDialects.contains(dialect)) {
            PlannerModule.getInstance()
                    .addUrlToClassLoader(parserJar(PlannerFactory.class.getClassLoader(), dialect));
        }
        Planner planner = delegate.create(context);
        PlannerBootstrap.plannerCreated(context.getTableConfig());
        return planner;
    }

    /** The jar holding the parser of {@code dialect} (e.g. Hive's connector jar). */
    private static URL parserJar(ClassLoader loader, SqlDialect dialect) {
        ParserFactory parser =
                FactoryUtil.discoverFactory(
                        loader, ParserFactory.class, dialect.name().toLowerCase());
        return parser.getClass().getProtectionDomain().getCodeSource().getLocation();
    }
}
