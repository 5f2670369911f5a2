package dev.confine.linux.cgroup;

import static org.assertj.core.api.Assertions.assertThat;

import dev.confine.linux.tree.TreeLimits;
import dev.confine.testing.HostRequirements;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The reuse rules of the idle pool, on v1 tree cgroups (where both its paths apply). */
@Timeout(60)
class CgroupPoolTest {
  private static final TreeLimits MEMORY = new TreeLimits(64L << 20, 0, 0, 0);
  private static final TreeLimits PIDS = new TreeLimits(0, 100, 0, 0);

  private Map<String, CgroupLayout.Hierarchy> v1;
  private final CgroupPool pool = new CgroupPool(false);
  private final List<TreeCgroup> made = new ArrayList<>();

  @BeforeEach
  void v1() {
    Cgroups.Result r = Cgroups.probe(Cgroups.Version.V1, null);
    HostRequirements.require(r);
    v1 = r.cgroups().layout().v1();
    HostRequirements.require(
        v1.containsKey("freezer") && v1.containsKey("memory") && v1.containsKey("pids"),
        "the v1 freezer, memory and pids hierarchies are not all mounted");
  }

  @AfterEach
  void removeAll() throws Exception {
    pool.removeIdle();
    assertThat(CgroupJanitor.awaitIdle(Duration.ofSeconds(10))).isTrue();
    for (TreeCgroup cg : made) {
      if (cg instanceof V1TreeCgroup c) {
        c.closePlacementFiles();
      }
      try {
        cg.remove();
      } catch (IOException e) {
        // the janitor removed it already
      }
    }
  }

  private V1TreeCgroup create(TreeLimits limits) throws IOException {
    V1TreeCgroup cg = V1TreeCgroup.create(v1, Cgroups.nextName(), limits);
    made.add(cg);
    return cg;
  }

  @Test
  void aTrackerSeenEmptyIsIdleAgainAtOnceAndServesTheNextTreeWithoutCaps() throws Exception {
    V1TreeCgroup tracker = create(TreeLimits.NONE);
    pool.release(tracker, true);

    assertThat(pool.take(MEMORY)).isNull(); // other controllers
    assertThat(pool.take(TreeLimits.NONE)).isSameAs(tracker);
    assertThat(pool.take(TreeLimits.NONE)).isNull(); // taken: there is no other
  }

  @Test
  void aCappedCgroupIsRecycledOffThePathAndServesOnlyTheSameControllers() throws Exception {
    V1TreeCgroup capped = create(MEMORY);
    pool.release(capped, true);
    assertThat(CgroupJanitor.awaitIdle(Duration.ofSeconds(10))).isTrue();

    assertThat(pool.take(PIDS)).isNull();
    assertThat(pool.take(TreeLimits.NONE)).isNull();
    assertThat(pool.take(new TreeLimits(32L << 20, 0, 0, 0))).isSameAs(capped);
  }

  @Test
  void atMostMaxIdleCappedCgroupsAreKept() throws Exception {
    for (int i = 0; i <= CgroupPool.MAX_IDLE; i++) {
      pool.release(create(PIDS), true);
    }
    assertThat(CgroupJanitor.awaitIdle(Duration.ofSeconds(30))).isTrue();

    for (int i = 0; i < CgroupPool.MAX_IDLE; i++) {
      assertThat(pool.take(PIDS)).as("idle cgroup %d", i).isNotNull();
    }
    assertThat(pool.take(PIDS)).isNull(); // the one beyond the bound was removed
  }
}
