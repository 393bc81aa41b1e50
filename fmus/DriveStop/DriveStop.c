/* DriveStop: a linear motor drive against a stop, no force input (see DriveStop.mo);
 * the equations are common/drive_stop.h, shared with DriveStopForced. */
#include "drive_stop.h"

static double stop_force(const Model *m)
{
    (void)m;
    return -0.0;  /* none: adding -0.0 leaves every value as it is, a zero's sign too */
}
