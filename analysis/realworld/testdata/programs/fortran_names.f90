! fortran_names: a main program (solver) calls its internal procedure run,
! which calls the module procedure geometry::fill_row, whose internal
! procedure put writes through an unassociated pointer. gdb names each
! from the DIE tree (geometry::fill_row, fill_row::put, solver::run) and
! ends its backtrace at solver, the DW_AT_main_subprogram. Built with
! gfortran -O0 and -O2 by analysis/realworld (TestFortranFramesAsGDBNamesThem).
module geometry
  implicit none
contains
  subroutine fill_row(a, n, row)
    integer, intent(in) :: n, row
    real, pointer :: a(:)
    integer :: i
    do i = 1, n
      call put(i)
    end do
  contains
    subroutine put(i)
      integer, intent(in) :: i
      a(i) = real(row * i)
    end subroutine put
  end subroutine fill_row
end module geometry

program solver
  use geometry
  implicit none
  real, pointer :: a(:)
  nullify(a)
  call run()
  print *, 'done'
contains
  subroutine run()
    call fill_row(a, 4, 2)
  end subroutine run
end program solver
