; depot is a constant of type place in the domain; the problem cannot make it a package.
(define (problem delivery-bad)
  (:domain delivery)
  (:objects a - place
            depot - package
            t1 - truck)
  (:init (at t1 a))
  (:goal (and (at t1 depot))))
