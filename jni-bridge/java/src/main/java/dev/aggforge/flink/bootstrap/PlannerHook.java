package dev.aggforge.flink.bootstrap;

import java.util.List;

import dev.aggforge.flink.plan.AggregateDescriptor;

/**
 * The aggforge step installed in one TableEnvironment's optimizer, as code outside the planner
 * sees it (the step itself lives on the planner side, see {@link PlannerExtensionLoader}).
 */
public interface PlannerHook {

    /** Descriptors of the group aggregates seen so far, in plan order (inputs first). */
    List<AggregateDescriptor> descriptors();

    /** Forgets the recorded descriptors. */
    void clearDescriptors();
}
