/* DriveStopForced: DriveStop with the force input lam of its stop (see
 * DriveStopForced.mo); the equations are common/drive_stop.h, shared with DriveStop. */
#include "drive_stop.h"

static double stop_force(const Model *m)
{
    return -m->u[U_lam];  /* dh^T lam with dh = [-1] */
}
